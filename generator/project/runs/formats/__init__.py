"""The benchmark formats, one module per tool behind one registry (`registry`); `mapped` reads a campaign's own."""
