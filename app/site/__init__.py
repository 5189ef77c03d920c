"""The service's side of the static site, built by the `sitebuild` package: the static
mount and the rebuild after a data-repo commit (`serve`), the `hbench-app site` command
(`cli`), and the Pages workflow a new data repository starts with (`workflow`)."""
