"""Your bench: uploading sealed jobs, checked and kept privately, and reading them back."""
