package tool

// SimpleSchema is simpleSchema, for the test of every built-in tool's schema
// (package tool_test, which may import toolset).
var SimpleSchema = simpleSchema

// ReflectedSchema is tl's parameter schema reflected afresh, with the name
// schemas_gen.go gives its type; ok is false for a tool New did not make.
func ReflectedSchema(tl Tool) (name string, raw []byte, required []string, ok bool, err error) {
	r, ok := tl.(interface {
		reflectSchema() (string, *schema, error)
	})
	if !ok {
		return "", nil, nil, false, nil
	}
	name, s, err := r.reflectSchema()
	if err != nil {
		return name, nil, nil, true, err
	}
	return name, s.raw, s.required(), true, nil
}

// Reflections is how many schemas were reflected so far.
func Reflections() int64 { return reflections.Load() }

// ForgetSchemas empties the process's schemas, as a fresh process has them.
func ForgetSchemas() { schemas.Clear() }

// Required is the required members of tl's schema as the tool uses them.
func Required(tl Tool) []string {
	r, ok := tl.(interface{ schema() *schema })
	if !ok {
		return nil
	}
	return r.schema().required()
}
