# The files here are bad inputs for tests/test_bad_inputs.py, not cases to collect.
collect_ignore_glob = ["*.yaml", "*.yml", "*.py"]
