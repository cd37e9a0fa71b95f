"""Configuration, paths and encoding: what every layer may use.
Imports nothing of the package."""
