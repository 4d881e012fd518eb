"""Sleeps far past any wall limit a test sets."""

import time

time.sleep(60)
