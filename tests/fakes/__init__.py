"""Our own small stand-ins for outside services the tests can't reach (GitHub)."""
