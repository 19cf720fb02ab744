"""Performance models: symbolic (sympy) latency, resource and traffic models of an architecture,
lambdified to numpy so a whole population of configurations evaluates in one call."""
