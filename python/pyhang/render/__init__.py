"""Every sentence pyhang prints, and the JSON document: from the report
model (pyhang.model.report), for people (text) and scripts (json)."""
