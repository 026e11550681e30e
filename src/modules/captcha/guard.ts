// The routes of the actions a CAPTCHA may guard declare it (CONTRACT §21):
//   config: { captcha: 'sign_up' }
// and carry an optional `captchaToken` in their body. The check is a preHandler appended
// to the route's own, so it runs after the body's validation and the per-address budget
// (a flood of bad answers still spends its budget) and before the handler's work. Routes
// that declare none pay nothing.
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { CaptchaAction } from './schemas.ts'
import { type CaptchaDeps, checkCaptcha } from './service.ts'

declare module 'fastify' {
  interface FastifyContextConfig {
    captcha?: CaptchaAction
  }
}

export function installCaptchaGuard(app: FastifyInstance, deps: CaptchaDeps): void {
  app.addHook('onRoute', (route) => {
    const action = route.config?.captcha
    if (!action) return
    const check = async (request: FastifyRequest) => {
      const token = (request.body as { captchaToken?: string } | undefined)?.captchaToken
      await checkCaptcha(deps, request.log, request.tenant, action, token, request.clientIp)
    }
    const own = route.preHandler
    route.preHandler = own === undefined ? [check] : [...(Array.isArray(own) ? own : [own]), check]
  })
}
