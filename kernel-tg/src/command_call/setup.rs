//! Commands about what Kernel works with: `/provider` and `/model` (list or switch), `/skills`,
//! and `/web` (a login link to the web console).

use kernel_proto::v1 as pb;
use tonic::Status;

use crate::agentd::Client;
use crate::texts::{ProviderEntry, SkillEntry, Texts};

/// `/provider [name]`: switches to provider `name`, or lists the providers.
pub(super) async fn provider(
    name: Option<String>,
    client: &mut Client,
    texts: Texts,
) -> Result<String, Status> {
    if let Some(name) = name {
        let reply = client
            .select_provider(pb::SelectProviderRequest { name })
            .await?
            .into_inner();
        return Ok(texts.switched(&reply.provider, &reply.model));
    }
    let list = client
        .list_providers(pb::ListProvidersRequest {})
        .await?
        .into_inner();
    let entries: Vec<_> = list.providers.iter().map(provider_entry).collect();
    Ok(texts.providers(&entries, &list.current_provider, &list.current_model))
}

/// `/model [name]`: switches to model `name`, or lists the current provider's models.
pub(super) async fn model(
    name: Option<String>,
    client: &mut Client,
    texts: Texts,
) -> Result<String, Status> {
    if let Some(model) = name {
        let reply = client
            .select_model(pb::SelectModelRequest { model })
            .await?
            .into_inner();
        return Ok(texts.switched(&reply.provider, &reply.model));
    }
    let list = client
        .list_providers(pb::ListProvidersRequest {})
        .await?
        .into_inner();
    let models = list
        .providers
        .iter()
        .find(|p| p.name == list.current_provider)
        .map(|p| p.models.clone())
        .unwrap_or_default();
    Ok(texts.models(&list.current_provider, &models, &list.current_model))
}

/// `/skills`: the installed skills.
pub(super) async fn skills(client: &mut Client, texts: Texts) -> Result<String, Status> {
    let list = client
        .list_skills(pb::ListSkillsRequest {})
        .await?
        .into_inner();
    let entries: Vec<_> = list
        .skills
        .iter()
        .map(|s| SkillEntry {
            name: &s.name,
            description: &s.description,
            side_effects: &s.side_effects,
        })
        .collect();
    Ok(texts.skills(&entries))
}

/// `/web`: a one-time login link to the web console, or why there is none.
pub(super) async fn web(client: &mut Client, texts: Texts) -> Result<String, Status> {
    match client.create_web_login(pb::CreateWebLoginRequest {}).await {
        Ok(reply) => {
            let reply = reply.into_inner();
            Ok(texts.web_login_link(&reply.url, reply.expires_in_secs.div_ceil(60)))
        }
        Err(status) if status.code() == tonic::Code::FailedPrecondition => {
            Ok(texts.web_not_configured().to_owned())
        }
        Err(status) => Err(status),
    }
}

fn provider_entry(p: &pb::ProviderInfo) -> ProviderEntry<'_> {
    ProviderEntry {
        name: &p.name,
        models: &p.models,
        default_model: &p.default_model,
        available: p.available,
        current: p.current,
        cooldown_until: p.cooldown_until.as_deref(),
    }
}
