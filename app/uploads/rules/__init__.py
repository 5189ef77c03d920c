"""The redaction rule files (gitleaks' vendored default rules and our own additions), and
`update`, which re-imports gitleaks' rules."""
