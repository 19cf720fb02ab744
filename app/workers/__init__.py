"""Workers that keep long engine work off the GUI thread."""
