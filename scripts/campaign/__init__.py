"""llamp validation campaign: measured vs predicted runtime under injected network latency.

Entry point: scripts/llamp-campaign. See docs/campaign.md.
"""
