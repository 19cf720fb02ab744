"""The `systolic` command line: one module per subcommand, sharing main.py's error handling."""
