"""The web track: the shop, page observations and actions, drivers, the page environment, web runs, a person's play,
page agents and their training. May import: every layer up to puma."""
