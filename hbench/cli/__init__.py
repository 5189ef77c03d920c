"""The `hbench` command line: run, resume, verify, pack and upload jobs; read the registry."""
