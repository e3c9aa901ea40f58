package logging

// NewLogger exposes newLogger so tests can capture the output.
var NewLogger = newLogger
