"""The published evidence (results/): packed runs and models, the plan of the computation, computing it, re-grading
and re-running it, and the leaderboard. May import: every layer up to reproduce."""
