"""Every number, computed once per run: statistics, capacity, sweeps, the stack and the road."""
