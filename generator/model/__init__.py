"""The schema of records and campaign.yaml, and the value types: metrics, quantities, results, variants."""
