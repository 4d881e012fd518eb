"""Ground truth for the imports advice: importing torch grows the process by hundreds of MiB (its
shared libraries, mapped and touched), far more than the program's own work, which is nothing."""

import time

import torch  # LINE: import

if __name__ == "__main__":
    time.sleep(0.2)
    print(torch.__name__)
