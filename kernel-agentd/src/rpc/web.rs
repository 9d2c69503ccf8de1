//! The web console's access RPCs (`CreateWebLogin`, `RedeemWebLogin`, `CheckWebSession`) over
//! [`crate::web_auth::WebAuth`]; the login link's URL comes from the `[web]` config.

use kernel_proto::v1 as pb;
use tonic::Status;

use super::{AgentService, to_status};
use crate::error::ApiError;
use crate::web_auth::{LOGIN_TTL, SESSION_TTL, WebAuthError};

impl AgentService {
    pub(super) fn create_web_login_rpc(&self) -> Result<pb::CreateWebLoginResponse, Status> {
        if !self.config.web.configured {
            return Err(to_status(ApiError::FailedPrecondition(
                "the web console is not configured: add a [web] section to the config and \
                 start kernel-web"
                    .to_owned(),
            )));
        }
        let token = self
            .web
            .create_login()
            .map_err(|e| to_status(ApiError::internal(e)))?;
        tracing::info!("web console login link made");
        let url = format!("{}/login?token={token}", self.config.web.base_url());
        Ok(pb::CreateWebLoginResponse {
            url,
            token,
            expires_in_secs: secs(LOGIN_TTL),
        })
    }

    pub(super) fn redeem_web_login_rpc(
        &self,
        req: pb::RedeemWebLoginRequest,
    ) -> Result<pb::RedeemWebLoginResponse, Status> {
        let session = self.web.redeem(&req.token).map_err(refused)?;
        tracing::info!("web console login link redeemed");
        Ok(pb::RedeemWebLoginResponse {
            session,
            expires_in_secs: secs(SESSION_TTL),
        })
    }

    pub(super) fn check_web_session_rpc(
        &self,
        req: pb::CheckWebSessionRequest,
    ) -> Result<pb::CheckWebSessionResponse, Status> {
        let csrf = self.web.check(&req.session).map_err(refused)?;
        Ok(pb::CheckWebSessionResponse { csrf })
    }
}

fn refused(e: WebAuthError) -> Status {
    to_status(ApiError::NotFound(e.to_string()))
}

fn secs(d: std::time::Duration) -> u32 {
    u32::try_from(d.as_secs()).unwrap_or(u32::MAX)
}
