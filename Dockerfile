# One image for every role; the command picks the role (gateway, a service, a worker group).
FROM node:24-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund
COPY proto ./proto
COPY services ./services
COPY gateway ./gateway
COPY workers ./workers
COPY cli ./cli
USER node
EXPOSE 3000 50051
ENTRYPOINT ["node", "cli/billing.ts"]
CMD ["start", "gateway"]
