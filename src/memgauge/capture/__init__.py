"""Capture: what runs in the measured process and the watcher outside it. Produces plain data."""
