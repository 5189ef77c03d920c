"""Reports of public runs, the maintainers' queue, take-downs and the deny list."""
