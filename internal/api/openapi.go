package api

import (
	_ "embed"
	"encoding/json"
	"fmt"

	"go.yaml.in/yaml/v3"
)

// openapiYAML is the OpenAPI 3.1 document of the REST API, written as
// YAML for people and served as JSON. The HTTP tests check every answer
// against it.
//
//go:embed openapi.yaml
var openapiYAML []byte

// OpenAPI returns the OpenAPI document as JSON.
func OpenAPI() ([]byte, error) {
	var doc any
	if err := yaml.Unmarshal(openapiYAML, &doc); err != nil {
		return nil, fmt.Errorf("api.OpenAPI: %w", err)
	}
	return json.Marshal(doc)
}
