"""Publishing, withdrawing and deleting jobs, issued runs' counts, and retention."""
