"""Qt item models over engine results."""
