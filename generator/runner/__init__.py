"""`improvements run`: a record's arms started, benchmarked and stopped in randomized blocks, journalled."""
