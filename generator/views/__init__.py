"""What each output shows, read from the analysis: all wording lives here."""
