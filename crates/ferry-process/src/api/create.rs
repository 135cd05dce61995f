//! `POST /assemblies` and `POST /assemblies/{id}`: a multipart form with `params` (the JSON
//! string that is signed), `signature`, `num_expected_upload_files` (Uppy) or
//! `tus_num_expected_upload_files` (the Node SDK), any other text fields (`${fields.NAME}`), and
//! files. Field order does not matter, except that files must come after `params` and
//! `signature`: the request is authenticated and its steps checked before any byte of a file is
//! stored. Files are streamed to disk, never held in memory. Every read has an idle limit.

use std::time::Duration;

use axum::Json;
use axum::extract::multipart::{Field, MultipartRejection};
use axum::extract::{Multipart, Path, State};
use axum::http::StatusCode;
use serde_json::{Map, Value};
use tokio::io::AsyncWriteExt;

use crate::assembly::record::{Assembly, FileRecord, State as AState};
use crate::assembly::status::status;
use crate::error::ApiError;
use crate::id::Id;
use crate::limits::{MAX_FIELDS, MAX_FIELDS_BYTES, MAX_FILES, MAX_PARAMS_BYTES, parse_params};
use crate::service::Service;
use crate::steps::{self, Step};
use crate::upkeep::caps::{self, Caller};
use crate::upkeep::index::Receiving;

/// How long a form may go without delivering anything.
const IDLE: Duration = Duration::from_secs(30);

/// `POST /assemblies`: the server picks the id.
pub async fn create_new(
    State(svc): State<Service>,
    caller: Caller,
    form: Result<Multipart, MultipartRejection>,
) -> Result<(StatusCode, Json<Value>), ApiError> {
    create(svc, Id::random(), caller, form).await
}

/// `POST /assemblies/{id}`: the client picks the id (32 hex digits), as the Node SDK does.
pub async fn create_with_id(
    State(svc): State<Service>,
    caller: Caller,
    Path(id): Path<String>,
    form: Result<Multipart, MultipartRejection>,
) -> Result<(StatusCode, Json<Value>), ApiError> {
    let id = Id::parse(&id)
        .ok_or_else(|| ApiError::bad("INVALID_FORM_DATA", "An Assembly id is 32 hex digits."))?;
    create(svc, id, caller, form).await
}

fn form_error(why: impl std::fmt::Display) -> ApiError {
    ApiError::bad(
        "INVALID_FORM_DATA",
        format!("The form could not be read: {why}"),
    )
}

/// What the form said before its files.
struct Form {
    caller: Caller,
    params: Option<String>,
    signature: Option<String>,
    expected: Option<u64>,
    fields: Map<String, Value>,
    fields_bytes: usize,
}

async fn create(
    svc: Service,
    id: Id,
    caller: Caller,
    form: Result<Multipart, MultipartRejection>,
) -> Result<(StatusCode, Json<Value>), ApiError> {
    let mut form_data = form.map_err(|e| form_error(e.body_text()))?;
    let mut form = Form {
        caller,
        params: None,
        signature: None,
        expected: None,
        fields: Map::new(),
        fields_bytes: 0,
    };
    // Not expired while its form arrives; its bytes count against the disk cap meanwhile.
    let mut receiving = svc.0.upkeep.index.receiving(&id);
    let mut assembly: Option<Assembly> = None;
    loop {
        let next = tokio::time::timeout(IDLE, form_data.next_field()).await;
        let field = match next {
            Ok(Ok(Some(f))) => f,
            Ok(Ok(None)) => break,
            Ok(Err(e)) => {
                return Err(abort(&svc, assembly.as_ref(), form_error(e.body_text())).await);
            }
            Err(_) => return Err(abort(&svc, assembly.as_ref(), form_error("it stalled")).await),
        };
        if field.file_name().is_some() {
            if assembly.is_none() {
                let a = open(&svc, &id, &form).await?;
                assembly = Some(a);
            }
            let Some(a) = assembly.as_mut() else { break };
            if a.uploads.len() as u64 >= MAX_FILES {
                return Err(abort(
                    &svc,
                    Some(a),
                    ApiError::bad(
                        "MAX_NUMBER_OF_FILES_EXCEEDED",
                        format!("An Assembly takes at most {MAX_FILES} files."),
                    ),
                )
                .await);
            }
            match store_file(&svc, &id, field, &mut receiving).await {
                Ok(file) => {
                    a.bytes_received += file.size;
                    a.bytes_expected += file.size;
                    a.uploads.push(file);
                }
                Err(e) => return Err(abort(&svc, Some(a), e).await),
            }
            continue;
        }
        let name = field.name().unwrap_or_default().to_owned();
        let cap = if name == "params" {
            MAX_PARAMS_BYTES
        } else {
            MAX_FIELDS_BYTES
        };
        let text = match read_text(field, cap).await {
            Ok(t) => t,
            Err(e) => return Err(abort(&svc, assembly.as_ref(), e).await),
        };
        if assembly.is_some() && matches!(name.as_str(), "params" | "signature") {
            return Err(abort(
                &svc,
                assembly.as_ref(),
                ApiError::bad(
                    "INVALID_FORM_DATA",
                    "params and signature must come before the files.",
                ),
            )
            .await);
        }
        match name.as_str() {
            "params" => form.params = Some(text),
            "signature" => form.signature = Some(text),
            "num_expected_upload_files" | "tus_num_expected_upload_files" => {
                let n = text
                    .trim()
                    .parse::<u64>()
                    .ok()
                    .filter(|n| *n <= MAX_FILES)
                    .ok_or_else(|| {
                        ApiError::bad(
                            "ASSEMBLY_INVALID_NUM_EXPECTED_UPLOAD_FILES_PARAM",
                            format!("{name} must be a whole number from 0 to {MAX_FILES}."),
                        )
                    })?;
                form.expected = Some(n);
            }
            _ => {
                form.fields_bytes += name.len() + text.len();
                if form.fields.len() >= MAX_FIELDS || form.fields_bytes > MAX_FIELDS_BYTES {
                    return Err(ApiError::bad(
                        "INVALID_FORM_DATA",
                        format!(
                            "The form's fields exceed {MAX_FIELDS} fields or {MAX_FIELDS_BYTES} bytes."
                        ),
                    ));
                }
                form.fields.insert(name, Value::String(text));
            }
        }
    }
    let mut a = match assembly {
        Some(a) => a,
        None => open(&svc, &id, &form).await?,
    };
    a.expected_uploads = a.uploads.len() as u64 + form.expected.unwrap_or(0);
    if a.uploads_done() {
        a.state = AState::Executing;
    }
    svc.insert(&a)
        .await
        .map_err(|e| ApiError::internal("ASSEMBLY_COULD_NOT_BE_CREATED", e))?;
    if a.state == AState::Executing {
        svc.start(a.id.clone());
    }
    Ok((StatusCode::OK, Json(status(&a, &svc.config().urls))))
}

/// Authenticates the form, checks its steps and creates the Assembly's directory and record.
async fn open(svc: &Service, id: &Id, form: &Form) -> Result<Assembly, ApiError> {
    let raw = form
        .params
        .as_deref()
        .ok_or_else(|| ApiError::bad("NO_PARAMS_FIELD", "The form has no params field."))?;
    let params = parse_params(raw)?;
    svc.config().credentials.check(
        raw,
        &params,
        form.signature.as_deref(),
        jiff::Timestamp::now(),
    )?;
    let steps = instructions(svc, &params).await?;
    let mut fields = match params.get("fields") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(f)) => f.clone(),
        Some(_) => {
            return Err(ApiError::bad(
                "INVALID_PARAMS_FIELD",
                "params.fields must be an object.",
            ));
        }
    };
    if fields.len() > MAX_FIELDS
        || Value::Object(fields.clone()).to_string().len() > MAX_FIELDS_BYTES
    {
        return Err(ApiError::bad(
            "INVALID_PARAMS_FIELD",
            format!("params.fields exceed {MAX_FIELDS} fields or {MAX_FIELDS_BYTES} bytes."),
        ));
    }
    fields.extend(form.fields.clone());
    check_egress(svc, &steps, &fields, id)?;
    match params.get("notify_url") {
        None | Some(Value::Null) => {}
        Some(Value::String(u))
            if url::Url::parse(u).is_ok_and(|u| matches!(u.scheme(), "http" | "https")) => {}
        Some(_) => {
            return Err(ApiError::bad(
                "ASSEMBLY_INVALID_NOTIFY_URL",
                "notify_url must be an http or https URL.",
            ));
        }
    }
    // Last of the checks: a refused request takes no place under the caps.
    let client = form.caller.client(&svc.config().credentials.key);
    caps::admit(svc, &client, id).await?;
    svc.0.store.create_dirs(id).await.map_err(|e| {
        if e.kind() == std::io::ErrorKind::AlreadyExists {
            ApiError::new(
                StatusCode::CONFLICT,
                "ASSEMBLY_COULD_NOT_BE_CREATED",
                "An Assembly with this id exists.",
            )
        } else {
            ApiError::internal("ASSEMBLY_COULD_NOT_BE_CREATED", e)
        }
    })?;
    let mut a = Assembly::new(
        id.clone(),
        params,
        steps,
        fields,
        form.expected.unwrap_or(0),
    );
    a.client = Some(client);
    svc.insert(&a)
        .await
        .map_err(|e| ApiError::internal("ASSEMBLY_COULD_NOT_BE_CREATED", e))?;
    Ok(a)
}

async fn instructions(svc: &Service, params: &Value) -> Result<Vec<Step>, ApiError> {
    let raw_steps = steps::template::resolve(params, svc.config().templates.as_deref()).await?;
    let engines = &svc.config().engines;
    let egress = svc.config().egress.as_deref();
    steps::plan(&raw_steps, &|r| {
        engines.runs(r) && (r != crate::robots::Robot::HttpImport || egress.is_some())
    })
}

/// Refuses, before any file is received, addresses the egress rules forbid: an import's URLs,
/// and a store's host once the variables known now (`fields`, the Assembly id) are expanded.
fn check_egress(
    svc: &Service,
    steps: &[Step],
    fields: &Map<String, Value>,
    id: &Id,
) -> Result<(), ApiError> {
    let Some(egress) = svc.config().egress.as_deref() else {
        return Ok(());
    };
    for step in steps {
        match step.robot {
            crate::robots::Robot::HttpImport => {
                crate::robots::import::check_addresses(&step.name, &step.params, egress)?
            }
            crate::robots::Robot::S3Store => {
                crate::robots::s3store::check_host(&step.name, &step.params, fields, id, egress)?
            }
            _ => {}
        }
    }
    Ok(())
}

/// Ends a half-received Assembly with `REQUEST_ABORTED` (if one was created) and passes `e` on.
async fn abort(svc: &Service, a: Option<&Assembly>, e: ApiError) -> ApiError {
    if let Some(a) = a {
        let mut a = a.clone();
        a.state = AState::Aborted;
        a.finish_clock();
        if let Err(err) = svc.insert(&a).await {
            tracing::error!(assembly = %a.id, error = %err, "cannot record an aborted assembly");
        }
    }
    e
}

async fn read_text(mut field: Field<'_>, cap: usize) -> Result<String, ApiError> {
    let name = field.name().unwrap_or_default().to_owned();
    let mut buf = Vec::new();
    loop {
        let chunk = tokio::time::timeout(IDLE, field.chunk())
            .await
            .map_err(|_| form_error("it stalled"))?;
        let Some(chunk) = chunk.map_err(|e| form_error(e.body_text()))? else {
            break;
        };
        if buf.len() + chunk.len() > cap {
            let code = if name == "params" {
                "INVALID_PARAMS_FIELD"
            } else {
                "INVALID_FORM_DATA"
            };
            return Err(ApiError::bad(
                code,
                format!("The field {name:?} is larger than {cap} bytes."),
            ));
        }
        buf.extend_from_slice(&chunk);
    }
    String::from_utf8(buf).map_err(|_| form_error(format!("the field {name:?} is not UTF-8")))
}

/// Streams one file part to `uploads/{file_id}`.
async fn store_file(
    svc: &Service,
    id: &Id,
    mut field: Field<'_>,
    receiving: &mut Receiving,
) -> Result<FileRecord, ApiError> {
    let file_id = Id::random();
    let name = field
        .file_name()
        .map(|n| n.rsplit(['/', '\\']).next().unwrap_or(n).to_owned())
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| "file".to_owned());
    let field_name = field.name().unwrap_or("file").to_owned();
    let path = svc.0.store.dir(id).join("uploads").join(file_id.as_str());
    let io = |e: std::io::Error| ApiError::internal("ASSEMBLY_COULD_NOT_BE_CREATED", e);
    let mut out = tokio::fs::File::create(&path).await.map_err(io)?;
    let mut size = 0u64;
    let mut head = Vec::new();
    loop {
        let chunk = tokio::time::timeout(IDLE, field.chunk())
            .await
            .map_err(|_| form_error("it stalled"))?;
        let Some(chunk) = chunk.map_err(|e| form_error(e.body_text()))? else {
            break;
        };
        size += chunk.len() as u64;
        if let Some(max) = svc.config().max_size.filter(|m| size > *m) {
            drop(out);
            let _ = tokio::fs::remove_file(&path).await;
            return Err(ApiError::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                "MAX_SIZE_EXCEEDED",
                format!("A file is larger than {max} bytes."),
            ));
        }
        let max_disk = svc.config().quotas.max_disk;
        let fleet = svc.0.upkeep.fleet_held();
        if !receiving.grow(chunk.len() as u64, max_disk, fleet) {
            drop(out);
            let _ = tokio::fs::remove_file(&path).await;
            return Err(caps::disk_full(max_disk.unwrap_or_default()));
        }
        if head.len() < 16 {
            head.extend_from_slice(&chunk[..chunk.len().min(16 - head.len())]);
        }
        out.write_all(&chunk).await.map_err(io)?;
    }
    out.sync_all().await.map_err(io)?;
    let mime = crate::mime::sniff(&head, &name);
    Ok(FileRecord::upload(file_id, name, size, mime, field_name))
}
