"""Chicago Express (railbarons): rules engine and rules service."""
