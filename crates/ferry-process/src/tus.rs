//! Uploads into an Assembly through ferry's own tus endpoint. The tus endpoint knows nothing of
//! Assemblies: it emits its lifecycle hooks, and [`TusBridge`] (a [`Hooks`] wrapped around the
//! application's own) takes each post-finish whose Upload-Metadata names an `assembly_url`, links
//! or copies the stored file into that Assembly's `uploads/` (with `--store s3`, streams the
//! object from the bucket: [`TusBridge::with_s3`]), and adds it as an upload with the
//! `fieldname`, `filename` and other metadata keys (`user_meta`) Uppy and the Node SDK send.
//! With `--assembly-max-disk`, its pre-create refuses an upload into an Assembly that would not
//! fit (413 `MAX_SIZE_EXCEEDED`). Every hook still reaches the application's receiver as before.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use ferry_hooks::{
    HookDecision, HookError, HookEvent, HookReply, HookStats, HookType, Hooks, StopSignal,
};
use serde_json::Value;

use crate::assembly::record::{FileRecord, TusUpload};
use crate::id::Id;
use crate::service::Service;

/// Metadata keys that are not user meta.
const OWN_KEYS: [&str; 6] = [
    "assembly_url",
    "fieldname",
    "filename",
    "filetype",
    "name",
    "type",
];

/// The application's hooks, plus Assembly uploads.
#[derive(Debug)]
pub struct TusBridge {
    inner: Arc<dyn Hooks>,
    service: Service,
    /// The tus store's bucket, when uploads are objects (`--store s3`).
    s3: Option<ferry_s3::S3Client>,
}

impl TusBridge {
    /// Wraps `inner`.
    pub fn new(inner: Arc<dyn Hooks>, service: Service) -> Self {
        Self {
            inner,
            service,
            s3: None,
        }
    }

    /// Uploads stored as objects in `client`'s bucket are read from it.
    pub fn with_s3(mut self, client: ferry_s3::S3Client) -> Self {
        self.s3 = Some(client);
        self
    }
}

#[async_trait]
impl Hooks for TusBridge {
    fn enabled(&self, hook: HookType) -> bool {
        // post-create and post-receive feed the Assembly's byte counters while uploads arrive;
        // pre-create refuses an upload that would pass --assembly-max-disk.
        let disk_cap = self.service.config().quotas.max_disk.is_some();
        matches!(
            hook,
            HookType::PostCreate | HookType::PostReceive | HookType::PostFinish
        ) || (hook == HookType::PreCreate && disk_cap)
            || self.inner.enabled(hook)
    }

    async fn blocking(&self, event: HookEvent) -> Result<HookDecision, HookError> {
        if event.hook == HookType::PreCreate {
            if let Some(refusal) = self.over_disk_cap(&event) {
                return Ok(HookDecision::Reject(refusal));
            }
            if !self.inner.enabled(HookType::PreCreate) {
                return Ok(HookDecision::proceed());
            }
        }
        self.inner.blocking(event).await
    }

    fn notify(&self, event: HookEvent) {
        if event.hook == HookType::PostFinish
            && event.upload().metadata.contains_key("assembly_url")
        {
            let svc = self.service.clone();
            let s3 = self.s3.clone();
            let ev = event.clone();
            tokio::spawn(async move { take(&svc, s3.as_ref(), &ev).await });
        }
        if event.hook == HookType::PostCreate {
            self.progress(&event);
        }
        if self.inner.enabled(event.hook) {
            self.inner.notify(event);
        }
    }

    fn notify_progress(&self, event: HookEvent, stop: &StopSignal) {
        self.progress(&event);
        if self.inner.enabled(HookType::PostReceive) {
            self.inner.notify_progress(event, stop);
        }
    }

    fn progress_interval(&self) -> Duration {
        self.inner.progress_interval()
    }

    fn stats(&self) -> Option<HookStats> {
        self.inner.stats()
    }
}

impl TusBridge {
    /// An upload naming an Assembly started or progressed: its entry in the Assembly's
    /// `tus_uploads`, in the background (the tus request never waits for it).
    fn progress(&self, event: &HookEvent) {
        let upload = event.upload();
        let Some(id) = upload
            .metadata
            .get("assembly_url")
            .and_then(|u| assembly_of(u))
        else {
            return;
        };
        let meta = &upload.metadata;
        let entry = TusUpload {
            upload_url: format!("{}{}", self.service.config().urls.tus, upload.id),
            filename: meta
                .get("filename")
                .or_else(|| meta.get("name"))
                .cloned()
                .unwrap_or_default(),
            fieldname: meta
                .get("fieldname")
                .cloned()
                .unwrap_or_else(|| "file".to_owned()),
            size: upload.size,
            offset: upload.offset,
        };
        let svc = self.service.clone();
        tokio::spawn(async move {
            let r = svc
                .update(&id, |a| {
                    if a.state != crate::assembly::record::State::Uploading {
                        return;
                    }
                    let list = &mut a.tus_uploads;
                    if let Some(t) = list.iter_mut().find(|t| t.upload_url == entry.upload_url) {
                        // Reports may arrive out of order: the offset never goes back.
                        t.offset = t.offset.max(entry.offset);
                    } else if (list.len() as u64) < crate::limits::MAX_FILES {
                        // Bounded like the files of a form.
                        list.push(entry);
                    }
                })
                .await;
            if let Err(e) = r {
                tracing::warn!(assembly = %id, error = %e, "cannot record a tus upload's progress");
            }
        });
    }

    /// The refusal of an upload into an Assembly that would not fit under
    /// `--assembly-max-disk` (an unknown length counts as nothing until it is declared).
    fn over_disk_cap(&self, event: &HookEvent) -> Option<HookReply> {
        let max = self.service.config().quotas.max_disk?;
        let upload = event.upload();
        upload.metadata.get("assembly_url")?;
        let size = upload.size.unwrap_or(0);
        let held = self.service.0.upkeep.disk_bytes();
        if held.saturating_add(size) <= max {
            return None;
        }
        let e = crate::upkeep::caps::disk_full(max);
        let body = serde_json::json!({
            "error": e.code,
            "message": e.message,
            "http_code": e.status.as_u16(),
        });
        let mut headers = axum::http::HeaderMap::new();
        headers.insert(
            axum::http::header::CONTENT_TYPE,
            axum::http::HeaderValue::from_static("application/json"),
        );
        Some(HookReply {
            status: e.status,
            headers,
            body: body.to_string(),
        })
    }
}

/// The Assembly id in an `assembly_url` (`.../assemblies/{id}`).
pub fn assembly_of(url: &str) -> Option<Id> {
    let (_, rest) = url.rsplit_once("/assemblies/")?;
    Id::parse(rest.split(['/', '?', '#']).next()?)
}

async fn take(svc: &Service, s3: Option<&ferry_s3::S3Client>, event: &HookEvent) {
    let upload = event.upload();
    let meta = &upload.metadata;
    let Some(id) = meta.get("assembly_url").and_then(|u| assembly_of(u)) else {
        return;
    };
    let file_id = Id::random();
    let dest = svc.0.store.dir(&id).join("uploads").join(file_id.as_str());
    if !dest.parent().is_some_and(|p| p.is_dir()) {
        return;
    }
    let storage = upload.storage.as_ref().map(|s| &s.0);
    let taken = match (storage.and_then(|s| s.get("Path")), storage) {
        (Some(src), _) => link_or_copy(src, &dest).await,
        (None, Some(s)) => match (s3, s.get("Bucket"), s.get("Key")) {
            (Some(client), Some(bucket), Some(key)) if client.settings().bucket == *bucket => {
                download(client, key, &dest).await
            }
            _ => Err("the upload is in a store ferry cannot read it back from".to_owned()),
        },
        (None, None) => Err("the upload has no storage location".to_owned()),
    };
    if let Err(e) = taken {
        let _ = tokio::fs::remove_file(&dest).await;
        tracing::error!(assembly = %id, error = %e, "cannot take a tus upload into an assembly");
        return;
    }
    let name = meta
        .get("filename")
        .or_else(|| meta.get("name"))
        .map(|n| n.rsplit(['/', '\\']).next().unwrap_or(n).to_owned())
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| "file".to_owned());
    let head = read_head(&dest).await;
    let size = upload.size.unwrap_or(upload.offset);
    let field = meta
        .get("fieldname")
        .cloned()
        .unwrap_or_else(|| "file".to_owned());
    let mut file = FileRecord::upload(
        file_id,
        name.clone(),
        size,
        crate::mime::sniff(&head, &name),
        field,
    );
    file.tus_upload_url = Some(format!("{}{}", svc.config().urls.tus, upload.id));
    for (k, v) in meta {
        if !OWN_KEYS.contains(&k.as_str()) {
            file.user_meta.insert(k.clone(), Value::String(v.clone()));
        }
    }
    match svc.add_upload(&id, file).await {
        Ok(true) => {}
        Ok(false) => {
            let _ = tokio::fs::remove_file(&dest).await;
        }
        Err(e) => tracing::error!(assembly = %id, error = %e, "cannot record a tus upload"),
    }
}

/// A hard link costs nothing; across file systems, a copy.
async fn link_or_copy(src: &str, dest: &std::path::Path) -> Result<(), String> {
    if tokio::fs::hard_link(src, dest).await.is_ok() {
        return Ok(());
    }
    tokio::fs::copy(src, dest)
        .await
        .map(drop)
        .map_err(|e| e.to_string())
}

/// The object `key` streamed to `dest` (each chunk bounded by the client's idle time).
async fn download(
    client: &ferry_s3::S3Client,
    key: &str,
    dest: &std::path::Path,
) -> Result<(), String> {
    use futures_util::StreamExt;
    use tokio::io::AsyncWriteExt;
    let mut body = client.get(key).await.map_err(|e| e.detail())?;
    let mut out = tokio::fs::File::create(dest)
        .await
        .map_err(|e| e.to_string())?;
    while let Some(chunk) = body.next().await {
        let chunk = chunk.map_err(|e| e.detail())?;
        out.write_all(&chunk).await.map_err(|e| e.to_string())?;
    }
    out.sync_all().await.map_err(|e| e.to_string())
}

async fn read_head(path: &std::path::Path) -> Vec<u8> {
    use tokio::io::AsyncReadExt;
    let mut head = vec![0u8; 16];
    let Ok(mut f) = tokio::fs::File::open(path).await else {
        return Vec::new();
    };
    let n = f.read(&mut head).await.unwrap_or(0);
    head.truncate(n);
    head
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn assembly_urls_name_their_assembly() {
        let id = "0123456789abcdef0123456789abcdef";
        assert_eq!(
            assembly_of(&format!("http://h/assemblies/{id}")).map(|i| i.to_string()),
            Some(id.to_owned())
        );
        assert_eq!(
            assembly_of(&format!("http://h/assemblies/{id}?x=1")).map(|i| i.to_string()),
            Some(id.to_owned())
        );
        assert_eq!(assembly_of("http://h/assemblies/../../etc"), None);
        assert_eq!(assembly_of("http://h/files/x"), None);
    }
}
