"""What this project's tests, benchmarks and demo share from a source checkout (not in the wheel)."""
