package main

import "encoding/json"

// jsonSchema202012Fixture is the input schema of json_schema_2020_12_tool:
// the canonical fixture of the conformance suite's json-schema-2020-12
// scenario, which checks that $schema, $defs (with $anchor),
// additionalProperties, allOf/anyOf and if/then/else come back unchanged
// in tools/list. It is test data and must stay exactly as it is.
var jsonSchema202012Fixture = json.RawMessage(`{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "$defs": {
    "address": {
      "$anchor": "addressDef",
      "type": "object",
      "properties": {
        "street": { "type": "string" },
        "city": { "type": "string" }
      }
    }
  },
  "properties": {
    "name": { "type": "string" },
    "address": { "$ref": "#/$defs/address" },
    "contactMethod": { "type": "string", "enum": ["phone", "email"] },
    "phone": { "type": "string" },
    "email": { "type": "string" }
  },
  "allOf": [{ "anyOf": [{ "required": ["phone"] }, { "required": ["email"] }] }],
  "if": {
    "properties": { "contactMethod": { "const": "phone" } },
    "required": ["contactMethod"]
  },
  "then": { "required": ["phone"] },
  "else": { "required": ["email"] },
  "additionalProperties": false
}`)
