// Checks real responses against an OpenAPI document: the operation exists, the status is listed,
// required headers are there, and the body has the listed media type and validates against its
// schema. Used by this package's tests (app.request) and the server's (a real socket).
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js'
import { expect } from 'vitest'

// The parts of an OpenAPI 3.1 document this file reads.
type JsonSchema = { [keyword: string]: unknown }
export interface ExampleObject {
  summary?: string
  value: unknown
}
export interface MediaTypeObject {
  schema: JsonSchema
  examples?: Record<string, ExampleObject>
}
export interface ResponseObject {
  description: string
  headers?: Record<string, { required?: boolean; schema: JsonSchema }>
  /** Absent: the body is empty. */
  content?: Record<string, MediaTypeObject>
}
export interface ReferenceObject {
  $ref: string
}
export interface ParameterObject {
  name: string
  in: 'path' | 'query' | 'header'
  required?: boolean
  schema: JsonSchema
  examples?: Record<string, ExampleObject>
}
export interface OperationObject {
  operationId: string
  /** `[]`: no credentials needed. */
  security?: Array<Record<string, string[]>>
  parameters?: ParameterObject[]
  requestBody?: { required?: boolean; content: Record<string, MediaTypeObject> }
  responses: Record<string, ResponseObject | ReferenceObject>
}
export interface OpenApiDocument {
  openapi: string
  info: { title: string; version: string }
  servers: Array<{ url: string; description?: string }>
  security?: Array<Record<string, string[]>>
  paths: Record<string, Partial<Record<(typeof METHODS)[number], OperationObject>>>
  components: {
    schemas?: Record<string, JsonSchema>
    responses: Record<string, ResponseObject>
    securitySchemes?: Record<string, unknown>
  }
}

const DOCUMENT_ID = 'https://flowadmin.invalid/openapi.json'
/** Top-level document fields, declared so that strict mode accepts the document as a schema. */
const DOCUMENT_KEYWORDS = [
  'openapi',
  'info',
  'jsonSchemaDialect',
  'servers',
  'security',
  'tags',
  'paths',
  'components',
]
export const METHODS = ['get', 'put', 'post', 'delete'] as const

export interface ResponseCheck {
  /** `operationId` of the matched operation, or `METHOD path` when none matched. */
  operation: string
  status: number
  /** Empty when the response conforms. */
  problems: string[]
}

/** JSON Pointer escaping (RFC 6901). */
const pointer = (...parts: string[]) => parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/')

interface Route {
  template: string
  pattern: RegExp
  operations: Partial<Record<(typeof METHODS)[number], OperationObject>>
}

/** A regular expression for a path template; each `{name}` matches its parameter's `pattern`. */
function routeOf(template: string, item: OpenApiDocument['paths'][string]): Route {
  const parameters = new Map<string, ParameterObject>()
  for (const method of METHODS) {
    for (const parameter of item[method]?.parameters ?? []) parameters.set(parameter.name, parameter)
  }
  const source = template
    .split(/(\{[^}]+\})/)
    .map((part) => {
      const name = /^\{([^}]+)\}$/.exec(part)?.[1]
      if (name === undefined) return part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
      const pattern = parameters.get(name)?.schema.pattern
      return typeof pattern === 'string' ? `(?:${pattern.replace(/^\^/, '').replace(/\$$/, '')})` : '[^/]+'
    })
    .join('')
  return { template, pattern: new RegExp(`^${source}$`), operations: item }
}

/** A validator of responses against `served`, an OpenAPI document as an app serves it. */
export function createResponseValidator(served: object) {
  const document = served as OpenApiDocument
  const ajv = new Ajv2020({ allErrors: true, strict: true })
  ajv.addVocabulary(DOCUMENT_KEYWORDS)
  ajv.addSchema(document as object, DOCUMENT_ID)
  const validators = new Map<string, ValidateFunction>()
  /** The validator of the schema at this JSON Pointer of the document. */
  const schemaAt = (at: string): ValidateFunction => {
    let validate = validators.get(at)
    if (validate === undefined) {
      validate = ajv.compile({ $ref: `${DOCUMENT_ID}#/${at}` })
      validators.set(at, validate)
    }
    return validate
  }
  const errorsOf = (validate: ValidateFunction) =>
    ajv.errorsText(validate.errors, { dataVar: 'body', separator: '; ' })

  const base = (document.servers[0]?.url ?? '/').replace(/\/$/, '')
  const routes = Object.entries(document.paths).map(([template, item]) => routeOf(template, item))

  /** The response object and the pointer to it, following a `$ref` to the components. */
  function resolve(
    response: ResponseObject | ReferenceObject,
    at: string,
  ): { response: ResponseObject; at: string } {
    if (!('$ref' in response)) return { response, at }
    const name = response.$ref.replace('#/components/responses/', '')
    const target = document.components.responses[name]
    if (target === undefined) throw new Error(`unresolved ${response.$ref}`)
    return { response: target, at: pointer('components', 'responses', name) }
  }

  return {
    document,

    /** Every documented `operationId status` pair. */
    documented(): string[] {
      return routes.flatMap((route) =>
        METHODS.flatMap((method) => {
          const operation = route.operations[method]
          return operation ? Object.keys(operation.responses).map((s) => `${operation.operationId} ${s}`) : []
        }),
      )
    },

    /** Whether `value` validates against the schema at this JSON Pointer of the document. */
    validates(at: string, value: unknown): boolean {
      return schemaAt(at)(value) as boolean
    },

    /** Compiles every schema of every body and header the document lists; returns how many. */
    compileAll(): number {
      let count = 0
      const visit = (node: unknown, at: string[]) => {
        if (typeof node !== 'object' || node === null) return
        for (const [key, value] of Object.entries(node)) {
          if (key === 'schema') {
            schemaAt(pointer(...at, key))
            count++
          } else visit(value, [...at, key])
        }
      }
      visit(document.paths, ['paths'])
      visit(document.components.responses, ['components', 'responses'])
      for (const name of Object.keys(document.components.schemas ?? {})) {
        schemaAt(pointer('components', 'schemas', name))
        count++
      }
      return count
    },

    /** Checks one response (its body is read from a clone). `url` is absolute or a path. */
    async check(method: string, url: string, response: Response): Promise<ResponseCheck> {
      const status = response.status
      const path = new URL(url, 'http://host').pathname
      const lower = method.toLowerCase()
      const verb = lower === 'head' ? 'get' : lower
      const fail = (operation: string, ...problems: string[]): ResponseCheck => ({
        operation,
        status,
        problems,
      })

      if (base !== '' && !path.startsWith(`${base}/`))
        return fail(`${method} ${path}`, 'outside the server URL')
      let decoded: string
      try {
        decoded = decodeURIComponent(path.slice(base.length))
      } catch {
        return fail(`${method} ${path}`, 'malformed percent-encoding')
      }
      const all = routes.filter((route) => route.pattern.test(decoded))
      // OpenAPI: a concrete path (no template) matches before the templated ones it also fits.
      const concrete = all.filter((route) => !route.template.includes('{'))
      const matches = concrete.length === 1 ? concrete : all
      if (matches.length !== 1) {
        return fail(`${method} ${path}`, `${matches.length} path templates match ${decoded}`)
      }
      const route = matches[0] as Route
      const operation = route.operations[verb as (typeof METHODS)[number]]
      if (operation === undefined)
        return fail(`${method} ${path}`, `no ${verb} operation at ${route.template}`)

      const name = operation.operationId
      const listed = operation.responses[String(status)]
      if (listed === undefined) return fail(name, `status ${status} is not documented`)
      const { response: spec, at } = resolve(
        listed,
        pointer('paths', route.template, verb, 'responses', String(status)),
      )
      const problems: string[] = []

      for (const [header, definition] of Object.entries(spec.headers ?? {})) {
        const value = response.headers.get(header)
        if (value === null) {
          if (definition.required) problems.push(`header ${header} is missing`)
          continue
        }
        const validate = schemaAt(`${at}/${pointer('headers', header, 'schema')}`)
        if (!validate(value)) problems.push(`header ${header}: ${errorsOf(validate)}`)
      }

      const body = await response.clone().text()
      if (spec.content === undefined || lower === 'head') {
        if (body !== '') problems.push(`body must be empty, got ${body.slice(0, 80)}`)
        return { operation: name, status, problems }
      }
      const contentType = response.headers.get('Content-Type')
      const mediaType = (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? ''
      if (!(mediaType in spec.content)) {
        problems.push(`Content-Type ${contentType} is not one of ${Object.keys(spec.content).join(', ')}`)
        return { operation: name, status, problems }
      }
      let value: unknown = body
      try {
        // JSON lines (NDJSON) are text: many documents, not one.
        if (mediaType.endsWith('json') && mediaType !== 'application/x-ndjson') value = JSON.parse(body)
      } catch {
        problems.push(`body is not JSON: ${body.slice(0, 80)}`)
        return { operation: name, status, problems }
      }
      const validate = schemaAt(`${at}/${pointer('content', mediaType, 'schema')}`)
      if (!validate(value)) problems.push(errorsOf(validate))
      return { operation: name, status, problems }
    },
  }
}

export type ResponseValidator = ReturnType<typeof createResponseValidator>

/**
 * A check of each answer against the OpenAPI document the app serves (`GET /openapi.json`): gives
 * the answer back, and fails the test on any problem, naming the method and URL.
 */
export async function answersChecked(app: { request(path: string): Response | Promise<Response> }) {
  const validator = createResponseValidator(await (await app.request('/openapi.json')).json())
  return async (method: string, url: string, res: Response): Promise<Response> => {
    const result = await validator.check(method, `http://localhost${url}`, res.clone())
    expect(result.problems, `${method} ${url}`).toEqual([])
    return res
  }
}
