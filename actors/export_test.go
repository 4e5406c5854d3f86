package actors

// LogKeep is logKeep for the external tests.
const LogKeep = logKeep
