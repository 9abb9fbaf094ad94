"""What a PM takes away: the problem brief and solution evaluation, Word files, the assumption register export."""
