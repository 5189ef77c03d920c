"""hbench: run Harbor benchmarks, seal the job folder, and upload it to be checked and published."""

__version__ = "0.3.0"
