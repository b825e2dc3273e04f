"""Figure builders, one module per notebook topic. Pure drawing: the numbers come from the maths modules."""
