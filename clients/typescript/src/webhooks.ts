/**
 * `@task-tracker/client/webhooks`: verifying the deliveries a receiver gets, signing test
 * deliveries for a receiver's own tests, and a receiver for Node's http and Express in one call.
 */
export {
  signTestWebhook,
  verifyWebhook,
  WebhookVerificationError,
  type WebhookHeaders,
  type WebhookVerificationReason,
} from './webhook-verification';
export {
  webhookHandler,
  type WebhookHandler,
  type WebhookHandlerOptions,
  type WebhookRequest,
  type WebhookResponse,
} from './webhook-handler';
