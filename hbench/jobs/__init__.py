"""Harbor job folders: reading them, sealing them with a manifest, and packing them."""
