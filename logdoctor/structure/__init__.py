"""Structure: what a parsed log means as a run (steps, epochs, restarts, strides, counters), each with its source."""
