"""Ground truth for --alloc: a 400 MiB torch CPU tensor, written, alive at the allocation peak."""

import time

import torch

MIB = 1 << 20


def main() -> None:
    tensor = torch.ones(100 * MIB, dtype=torch.float32)  # ALLOC: tensor
    time.sleep(0.05)
    print(tensor.numel() * tensor.element_size() // MIB)


if __name__ == "__main__":
    main()
