"""The agent's steps, one module per topic: its token (`tokens`), its reports (`reports`), its pods
and their logs (`logs`)."""
