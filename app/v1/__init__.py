"""The runs API of the skill document: pushed run summaries, and runs published on boards."""
