"""`python -m harness.cli`: the `schedharness` command."""

from . import console_main

console_main()
