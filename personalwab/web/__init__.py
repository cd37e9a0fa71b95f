"""The web track: the shop, page observations and actions, drivers, the page environment, page agents, their training
and web runs. May import: every layer up to puma."""
