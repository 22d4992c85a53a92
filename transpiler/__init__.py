"""The front end: LibCST source → checked, lowered SSA graph."""
