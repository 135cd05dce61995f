//! The Assembly API's part of the server's OpenAPI document (`/openapi.json`): the routes of
//! [`crate::api::router`], described with utoipa's builders so the handlers stay plain axum
//! functions. The server's own test compares the document with the router path by path, so a
//! route added there without its entry here fails. Signatures are in the form (`signature`),
//! not in a header, so no security scheme applies.

use utoipa::openapi::path::{HttpMethod, OperationBuilder, ParameterBuilder, ParameterIn};
use utoipa::openapi::request_body::RequestBodyBuilder;
use utoipa::openapi::response::ResponseBuilder;
use utoipa::openapi::schema::{ObjectBuilder, Type};
use utoipa::openapi::tag::TagBuilder;
use utoipa::openapi::{
    ContentBuilder, OpenApi, OpenApiBuilder, PathItem, PathsBuilder, Required, Response,
};

const TAG: &str = "assemblies";

/// `{"error": CODE, "message": ...}`.
fn error_schema() -> ObjectBuilder {
    ObjectBuilder::new()
        .property("error", ObjectBuilder::new().schema_type(Type::String))
        .property("message", ObjectBuilder::new().schema_type(Type::String))
        .required("error")
}

fn json(description: &str, schema: ObjectBuilder) -> Response {
    ResponseBuilder::new()
        .description(description)
        .content(
            "application/json",
            ContentBuilder::new().schema(Some(schema)).build(),
        )
        .build()
}

fn error(description: &str) -> Response {
    json(description, error_schema())
}

/// The Assembly Status JSON (its many keys are Transloadit's; see docs/processing.md).
fn status(description: &str) -> Response {
    json(
        description,
        ObjectBuilder::new()
            .property("ok", ObjectBuilder::new().schema_type(Type::String))
            .property(
                "assembly_id",
                ObjectBuilder::new().schema_type(Type::String),
            )
            .property(
                "assembly_url",
                ObjectBuilder::new().schema_type(Type::String),
            )
            .property(
                "assembly_ssl_url",
                ObjectBuilder::new().schema_type(Type::String),
            )
            .property("tus_url", ObjectBuilder::new().schema_type(Type::String))
            .property("uploads", ObjectBuilder::new().schema_type(Type::Array))
            .property("results", ObjectBuilder::new().schema_type(Type::Object))
            .property("error", ObjectBuilder::new().schema_type(Type::String))
            .property("message", ObjectBuilder::new().schema_type(Type::String)),
    )
}

fn path_param(name: &str, description: &str) -> ParameterBuilder {
    ParameterBuilder::new()
        .name(name)
        .parameter_in(ParameterIn::Path)
        .required(Required::True)
        .description(Some(description))
        .schema(Some(ObjectBuilder::new().schema_type(Type::String)))
}

fn assembly_id() -> ParameterBuilder {
    path_param("id", "The Assembly's id (32 hex digits).")
}

fn create(summary: &str, with_id: bool) -> OperationBuilder {
    let form = RequestBodyBuilder::new()
        .description(Some(
            "`params` (JSON: `auth`, `steps` or `template_id`, `fields`, `notify_url`), \
             `signature`, `num_expected_upload_files`, other fields, then the files.",
        ))
        .required(Some(Required::True))
        .content(
            "multipart/form-data",
            ContentBuilder::new()
                .schema(Some(
                    ObjectBuilder::new()
                        .property("params", ObjectBuilder::new().schema_type(Type::String))
                        .property("signature", ObjectBuilder::new().schema_type(Type::String))
                        .required("params"),
                ))
                .build(),
        )
        .build();
    let mut op = OperationBuilder::new()
        .tag(TAG)
        .summary(Some(summary))
        .request_body(Some(form))
        .response("200", status("The new Assembly's status."))
        .response(
            "400",
            error("Bad params, steps or form (the documented error code)."),
        )
        .response(
            "401",
            error("Unknown key, missing or bad signature, expired params."),
        )
        .response(
            "403",
            error("An /http/import of an address that may not be reached."),
        )
        .response("413", error("A file over the size limit."));
    if with_id {
        op = op.parameter(assembly_id());
    }
    op
}

/// The Assembly API's paths.
pub fn document() -> OpenApi {
    let not_found = || error("No such Assembly (ASSEMBLY_NOT_FOUND).");
    let paths = PathsBuilder::new()
        .path(
            "/assemblies",
            PathItem::new(HttpMethod::Post, create("Create an Assembly.", false)),
        )
        .path(
            "/assemblies/{id}",
            PathItem::builder()
                .operation(
                    HttpMethod::Post,
                    create("Create an Assembly with the client's own id.", true),
                )
                .operation(
                    HttpMethod::Get,
                    OperationBuilder::new()
                        .tag(TAG)
                        .summary(Some("The Assembly Status."))
                        .parameter(assembly_id())
                        .response("200", status("The Assembly Status JSON."))
                        .response("404", not_found()),
                )
                .operation(
                    HttpMethod::Delete,
                    OperationBuilder::new()
                        .tag(TAG)
                        .summary(Some("Cancel: the running step is stopped."))
                        .parameter(assembly_id())
                        .response("200", status("The status, `ok: ASSEMBLY_CANCELED`."))
                        .response("404", not_found()),
                )
                .build(),
        )
        .path(
            "/assemblies/{id}/files/{file}",
            PathItem::new(
                HttpMethod::Get,
                OperationBuilder::new()
                    .tag(TAG)
                    .summary(Some("An upload's or a result's bytes (its `url`)."))
                    .parameter(assembly_id())
                    .parameter(path_param("file", "The file's id."))
                    .response(
                        "200",
                        ResponseBuilder::new().description("The bytes.").build(),
                    )
                    .response("404", not_found()),
            ),
        )
        .path(
            "/assemblies/{id}/stream",
            PathItem::new(
                HttpMethod::Get,
                OperationBuilder::new()
                    .tag(TAG)
                    .summary(Some("Live updates as server-sent events."))
                    .parameter(assembly_id())
                    .response(
                        "200",
                        ResponseBuilder::new()
                            .description("The event stream.")
                            .content("text/event-stream", ContentBuilder::new().build())
                            .build(),
                    )
                    .response(
                        "204",
                        ResponseBuilder::new()
                            .description("The Assembly had ended when the client last saw it.")
                            .build(),
                    )
                    .response("404", not_found())
                    .response("429", error("Too many streams on this Assembly.")),
            ),
        )
        .build();
    OpenApiBuilder::new()
        .paths(paths)
        .tags(Some([TagBuilder::new()
            .name(TAG)
            .description(Some(
                "Transloadit's Assembly API (on when `--assembly-key` is set).",
            ))
            .build()]))
        .build()
}
