"""The bottom layer beside core: small utilities every layer may use (file locks across xdist workers, the loopback test, the loopback HTTP server)."""
