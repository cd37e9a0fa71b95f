"""What the paper notebooks (nbs/paper/) use: the paper's values, the runs behind each table, claims, reports,
trajectories and the web track's report. May import: every layer up to web."""
