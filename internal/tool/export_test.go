package tool

// SimpleSchema is simpleSchema, for the test of every built-in tool's schema
// (package tool_test, which may import toolset).
var SimpleSchema = simpleSchema
